"""Import other tools' runs as ragdive runs of kind ``imported`` (see write.import_run)."""

from .base import ImportedRun
from .reference import read_reference
from .samples import read_deepeval, read_ragas
from .write import IMPORTERS, Importer, import_run, importer

__all__ = [
    "IMPORTERS",
    "ImportedRun",
    "Importer",
    "import_run",
    "importer",
    "read_deepeval",
    "read_ragas",
    "read_reference",
]
