// Package testhome makes a test binary hermetic: its TestMain calls Main,
// which points HOME and the XDG directories at a fresh temporary directory
// and clears the variables through which a developer's party, tmux and
// agent setup would leak in (a test run inside a party pane has TMUX,
// TMUX_PANE and PARTY_* set; ~/.claude/settings.json holds real hooks).
package testhome
