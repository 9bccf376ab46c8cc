"""Isolation of submitted code: static policy, hardened processes forked from a warm one, the
byte channel."""
