"""Session state that survives compaction: checkpoints and the Session State block."""
