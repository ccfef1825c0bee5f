package notify

import "strings"

// OSC9 is the notification escape of iTerm2 (and WezTerm, kitty, Windows
// Terminal): ESC ] 9 ; text BEL.
func OSC9(text string) string { return "\x1b]9;" + Plain(text) + "\a" }

// OSC777 is the notification escape of rxvt, foot, Ghostty and VTE
// terminals: ESC ] 777 ; notify ; title ; body BEL. The title ends at the
// first ';', so it has none.
func OSC777(title, body string) string {
	return "\x1b]777;notify;" + strings.ReplaceAll(Plain(title), ";", ",") + ";" + Plain(body) + "\a"
}

// Passthrough wraps seq so that a tmux (or screen) whose pane is the
// terminal passes it to its own terminal instead of eating it: DCS tmux;
// … ST with every ESC of seq doubled. The outer tmux passes it only with
// allow-passthrough on (tmux 3.3 and later).
func Passthrough(seq string) string {
	return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
}

// Nested says whether a client whose terminal is termname is itself a
// pane of an outer tmux, whose panes say TERM=tmux… or, by default before
// tmux 3.4 or with GNU screen's names, screen… (a GNU screen shows the
// passthrough as text; it is rare enough under tmux).
func Nested(termname string) bool {
	return strings.HasPrefix(termname, "tmux") || strings.HasPrefix(termname, "screen")
}
