"""One module per DVC stage: read params once, call the library, write outputs atomically."""
