// Package launch starts a pane's program with exactly the words party was
// given. tmux splits and expands what it is handed (a ';' word ends a
// command, a trailing ';' is dropped, one word goes to "sh -c"), so a pane
// never gets the program's words from tmux: party writes them, with the
// environment and the directory, to a spec file in the session's state dir,
// and tmux runs Command ("party exec-spec FILE", words tmux leaves alone),
// which reads the spec and replaces itself with the program (Resolve, then
// exec). The pane's process is then the program itself.
package launch
