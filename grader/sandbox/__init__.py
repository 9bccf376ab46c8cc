"""Isolation of submitted code: static policy, hardened warm-forked processes, the byte channel."""
