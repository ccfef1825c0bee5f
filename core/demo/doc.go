// Package demo is party demo: the default party of mock agents on a
// private tmux server, a message delivered to each by role and checked
// byte for byte against what the mocks logged, then the review loop
// between a claude and a codex mock in a new git repository until
// PR_READY. It drives party's own commands through Party and prints what
// happens into a log.
package demo
