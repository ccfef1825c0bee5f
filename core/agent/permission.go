package agent

import "strings"

// permissionQuestions are the approval questions of every agent
// (Profile.Permissions).
var permissionQuestions = func() []string {
	var out []string
	for _, k := range []Kind{Claude, Codex, Gemini} {
		out = append(out, profiles[k].Permissions...)
	}
	return out
}()

// PermissionAsked is the question of the approval dialog on screen
// (docs/agents-reference.md §2), with the command it shows when it shows
// one ("$ cmd"); "" when none is. Agents without a permission event
// (Codex) tell it only on screen. Any agent's question counts, whatever
// the pane's kind: a program party knows as generic may be one of them.
func PermissionAsked(screen string) string {
	q := ""
	cmd := ""
	for _, line := range strings.Split(screen, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "│ ")
		for _, p := range permissionQuestions {
			if strings.HasPrefix(line, p) {
				q = line
			}
		}
		if c, ok := strings.CutPrefix(line, "$ "); ok && q != "" && cmd == "" {
			cmd = c
		}
	}
	if q != "" && cmd != "" {
		q += " " + cmd
	}
	return q
}
