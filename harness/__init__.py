"""The pieces of the pipeline run outside DVC, shared by bench/ and studies/: the machine a
figure was measured on, wall-time records, and screening groups trained on a completed run."""
