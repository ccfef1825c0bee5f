package session

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/partyhq/party/core/usage"
)

// UnitName is the name of the user service that brings teams back at
// login: party-restore.service (systemd), com.partyhq.party-restore
// (launchd).
const UnitName = "party-restore"

// RestoreArgv is the command a user service runs at login: every team of
// every folder whose server died comes back.
func RestoreArgv(exe string) []string { return []string{exe, "sessions", "restore", "--all"} }

// UnitEnv are the variables of environ (KEY=VALUE) a Unit sets: PATH (the
// agents' programs), party's own variables, and the XDG and tmux folders
// party finds its state and server by.
func UnitEnv(environ []string) []string {
	var keep []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "XDG_STATE_HOME" || k == "TMUX_TMPDIR" || strings.HasPrefix(k, "PARTY_") {
			keep = append(keep, kv)
		}
	}
	return keep
}

// Unit is the user service of kind (systemd or launchd) that runs
// RestoreArgv(exe) once at login, with env (KEY=VALUE: PATH, so that the
// agents' programs are found, and party's own variables) set.
func Unit(kind, exe string, env []string) (string, error) {
	argv := RestoreArgv(exe)
	switch kind {
	case "systemd":
		var b strings.Builder
		b.WriteString("# ~/.config/systemd/user/" + UnitName + ".service\n")
		b.WriteString("# systemctl --user daemon-reload && systemctl --user enable " + UnitName + "\n")
		b.WriteString("[Unit]\nDescription=Bring back the party teams whose tmux server died\n\n")
		b.WriteString("[Service]\nType=oneshot\n")
		for _, kv := range env {
			b.WriteString("Environment=" + systemdQuote(kv, false) + "\n")
		}
		words := make([]string, len(argv))
		for i, a := range argv {
			words[i] = systemdQuote(a, true)
		}
		b.WriteString("ExecStart=" + strings.Join(words, " ") + "\n\n")
		b.WriteString("[Install]\nWantedBy=default.target\n")
		return b.String(), nil
	case "launchd":
		var b strings.Builder
		b.WriteString(xml.Header)
		b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
		b.WriteString("<!-- ~/Library/LaunchAgents/com.partyhq." + UnitName + ".plist; launchctl load it -->\n")
		b.WriteString("<plist version=\"1.0\">\n<dict>\n")
		b.WriteString("  <key>Label</key>\n  <string>com.partyhq." + UnitName + "</string>\n")
		b.WriteString("  <key>ProgramArguments</key>\n  <array>\n")
		for _, a := range argv {
			b.WriteString("    <string>" + xmlText(a) + "</string>\n")
		}
		b.WriteString("  </array>\n")
		if len(env) > 0 {
			b.WriteString("  <key>EnvironmentVariables</key>\n  <dict>\n")
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				b.WriteString("    <key>" + xmlText(k) + "</key>\n    <string>" + xmlText(v) + "</string>\n")
			}
			b.WriteString("  </dict>\n")
		}
		b.WriteString("  <key>RunAtLoad</key>\n  <true/>\n</dict>\n</plist>\n")
		return b.String(), nil
	}
	return "", fmt.Errorf("%w: a user service for %q: systemd or launchd", usage.Err, kind)
}

// systemdQuote is s as one word of a systemd unit line: double-quoted,
// with backslash and double quote escaped, % (a specifier) doubled, and in
// a command line (exec) $ (a variable) doubled too.
func systemdQuote(s string, exec bool) string {
	pairs := []string{`\`, `\\`, `"`, `\"`, "%", "%%", "\n", `\n`}
	if exec {
		pairs = append(pairs, "$", "$$")
	}
	return `"` + strings.NewReplacer(pairs...).Replace(s) + `"`
}

// xmlText is s escaped for XML character data.
func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
