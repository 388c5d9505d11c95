"""Where a sweep's runs run. The LocalExecutor (this event loop) lives beside the sweep in ragdive.pipeline.sweep;
``ragdive.executors.ray`` distributes runs as Ray actors (the optional extra ``ray``), imported only when asked
for, so ``import ragdive`` never pays for Ray."""
