package iterm

// Choice is how a terminal attaches and why, as party attach --json
// reports it.
type Choice struct {
	Control bool   `json:"control_mode"`
	Why     string `json:"why"`
}

// Wanted says whether a terminal with the environment getenv attaches in
// control mode: iTerm2 (TERM_PROGRAM=iTerm.app, or LC_TERMINAL=iTerm2,
// which ssh passes on), not inside tmux already ($TMUX), not asked for a
// plain client (raw, PARTY_RAW=1) and not turned off in the configuration
// (enabled is iterm.controlMode).
func Wanted(getenv func(string) string, raw, enabled bool) Choice {
	switch {
	case getenv("TMUX") != "":
		return Choice{Why: "inside tmux: the client switches"}
	case raw:
		return Choice{Why: "--raw"}
	case getenv("PARTY_RAW") == "1":
		return Choice{Why: "PARTY_RAW=1"}
	case !enabled:
		return Choice{Why: "iterm.controlMode is false"}
	case getenv("TERM_PROGRAM") == "iTerm.app":
		return Choice{Control: true, Why: "TERM_PROGRAM=iTerm.app"}
	case getenv("LC_TERMINAL") == "iTerm2":
		return Choice{Control: true, Why: "LC_TERMINAL=iTerm2"}
	}
	return Choice{Why: "not iTerm2"}
}
