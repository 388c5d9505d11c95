"""evaluation stage."""
