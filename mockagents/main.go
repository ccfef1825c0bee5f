package mockagents

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

// Main runs a mock agent with os.Args and the environment and returns its
// exit status.
func Main() int {
	opt, err := options(os.Args, os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		return 2
	}
	fd := int(os.Stdin.Fd())
	size := func() (int, int) {
		w, h, err := term.GetSize(int(os.Stdout.Fd()))
		if err != nil || w <= 0 || h <= 0 {
			return 80, 24
		}
		return w, h
	}
	if term.IsTerminal(fd) {
		// Raw mode: a cooked tty keeps only 4095 bytes of a line, and the
		// real agents read keys, not lines.
		old, err := term.MakeRaw(fd)
		if err == nil {
			defer term.Restore(fd, old)
		}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	return newEngine(opt, os.Stdout, size).run(os.Stdin, winch)
}

// options reads the persona, the real agents' flags that matter (claude
// --settings, codex -c notify=... and --no-alt-screen; others are ignored)
// and the PARTY_MOCK_* behaviours.
func options(args []string, getenv func(string) string) (Options, error) {
	opt := Options{
		Persona:    persona(filepath.Base(args[0])),
		LogPath:    getenv("PARTY_MOCK_LOG"),
		TracePath:  getenv("PARTY_MOCK_TRACE"),
		Pane:       getenv("TMUX_PANE"),
		EnterGuard: 100 * time.Millisecond,
		Burst:      getenv("PARTY_MOCK_BURST") != "0",
		NoEscHint:  getenv("PARTY_MOCK_NO_ESC_HINT") == "1",
	}
	if p := getenv("PARTY_MOCK_PERSONA"); p != "" {
		opt.Persona = persona(p)
	}
	script := getenv("PARTY_MOCK_SCRIPT")
	noAlt := false
	var replay string
	speed, noDelay, exact := 1.0, false, false
	for i := 1; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--persona":
			opt.Persona = persona(val())
		case strings.HasPrefix(a, "--persona="):
			opt.Persona = persona(strings.TrimPrefix(a, "--persona="))
		case a == "--mock-script":
			script = val()
		case a == "--settings":
			opt.Settings = val()
		case a == "-c" || a == "--config":
			if n := parseNotify(val()); n != nil {
				opt.Notify = n
			}
		case a == "--no-alt-screen":
			noAlt = true
		case a == "--replay":
			replay = val()
		case a == "--speed":
			v, err := strconv.ParseFloat(val(), 64)
			if err != nil || v <= 0 {
				return opt, fmt.Errorf("--speed must be a positive number")
			}
			speed = v
		case a == "--no-delay":
			noDelay = true
		case a == "--exact":
			exact = true
		}
	}
	switch opt.Persona {
	case "claude":
		opt.AltScreen = getenv("CLAUDE_CODE_NO_FLICKER") == "1" && getenv("CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN") != "1"
	case "codex":
		opt.AltScreen = !noAlt
	}
	switch getenv("PARTY_MOCK_ALT_SCREEN") {
	case "1":
		opt.AltScreen = true
	case "0":
		opt.AltScreen = false
	}
	opt.TrustDialog = getenv("PARTY_MOCK_TRUST_DIALOG") == "1" && (opt.Persona == "claude" || opt.Persona == "codex")
	if g := getenv("PARTY_MOCK_ENTER_GUARD"); g != "" {
		d, err := parseDur(g)
		if err != nil {
			return opt, fmt.Errorf("PARTY_MOCK_ENTER_GUARD: %w", err)
		}
		opt.EnterGuard = d
	}
	if replay != "" {
		r, err := LoadReplay(replay)
		if err != nil {
			return opt, err
		}
		r.Speed, r.NoDelay, r.Exact = speed, noDelay, exact
		opt.Replay = r
		opt.AltScreen = false
	}
	if script != "" {
		s, err := LoadScript(script)
		if err != nil {
			return opt, err
		}
		opt.Script = s
	}
	return opt, nil
}

func persona(name string) string {
	switch name {
	case "claude", "codex", "gemini":
		return name
	}
	return "generic"
}
