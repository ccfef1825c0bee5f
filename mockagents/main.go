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

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/mockagents/script"
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
	if h, ok := headlessOf(opt.Persona, os.Args[1:]); ok {
		return h.run(opt, os.Stdout, os.Stderr)
	}
	if msg, status := refusal(opt); msg != "" {
		fmt.Fprint(os.Stdout, msg)
		return status
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
			defer func() { _ = term.Restore(fd, old) }() // exiting; nothing to do about a terminal that is gone
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
	name := personaName(filepath.Base(args[0]))
	if p := getenv("PARTY_MOCK_PERSONA"); p != "" {
		name = personaName(p)
	}
	for i, a := range args {
		switch {
		case a == "--persona" && i+1 < len(args):
			name = personaName(args[i+1])
		case strings.HasPrefix(a, "--persona="):
			name = personaName(strings.TrimPrefix(a, "--persona="))
		}
	}
	opt := DefaultOptions(name)
	opt.LogPath, opt.TracePath, opt.Pane = getenv("PARTY_MOCK_LOG"), getenv("PARTY_MOCK_TRACE"), getenv("TMUX_PANE")
	if err := switches(&opt, getenv); err != nil {
		return opt, err
	}
	scriptPath := getenv("PARTY_MOCK_SCRIPT")
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
			val()
		case a == "--mock-script":
			scriptPath = val()
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
		case a == "--resume" && opt.Persona != "codex":
			opt.Resume = val()
		case a == "resume" && opt.Persona == "codex":
			opt.Resume = val()
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
	if replay != "" {
		r, err := LoadReplay(replay)
		if err != nil {
			return opt, err
		}
		r.Speed, r.NoDelay, r.Exact = speed, noDelay, exact
		opt.Replay = r
		opt.AltScreen = false
	}
	if scriptPath != "" {
		s, err := script.Load(scriptPath)
		if err != nil {
			return opt, err
		}
		opt.Script = s
	}
	return opt, nil
}

// switches applies the PARTY_MOCK_* behaviour switches to opt. A flag is
// on with 1 and off with 0; a duration is a Go duration or bare
// milliseconds; unset keeps the real agent's behaviour.
func switches(opt *Options, getenv func(string) string) error {
	flags := []struct {
		env string
		to  *bool
	}{
		{"PARTY_MOCK_TRUST_DIALOG", &opt.TrustDialog},
		{"PARTY_MOCK_NO_ESC_HINT", &opt.NoEscHint},
		{"PARTY_MOCK_CLAUDE_TRY", &opt.TryHint},
		{"PARTY_MOCK_CLAUDE_BATCH", &opt.Batch},
		{"PARTY_MOCK_CLAUDE_ESC_RESTORE", &opt.EscRestore},
		{"PARTY_MOCK_BURST", &opt.Burst},
		{"PARTY_MOCK_CODEX_BLINK", &opt.Blink},
		{"PARTY_MOCK_CODEX_ALL_INPUTS", &opt.AllInputs},
		{"PARTY_MOCK_GEMINI_MENUS", &opt.Menus}, // the old name of PARTY_MOCK_MENUS
		{"PARTY_MOCK_MENUS", &opt.Menus},
		{"PARTY_MOCK_GEMINI_MERGE", &opt.Merge},
		{"PARTY_MOCK_GEMINI_AUTH", &opt.Auth},
		{"PARTY_MOCK_BANG", &opt.Bang},
		{"PARTY_MOCK_SLASH", &opt.Slash},
		{"PARTY_MOCK_CLAUDE_EXIT", &opt.ExitWords},
		{"PARTY_MOCK_BACKSLASH", &opt.Backslash},
		{"PARTY_MOCK_GEMINI_INIT", &opt.InitPhase},
		{"PARTY_MOCK_LINE_KILL", &opt.LineKill},
	}
	for _, f := range flags {
		switch v := getenv(f.env); v {
		case "":
		case "1":
			*f.to = true
		case "0":
			*f.to = false
		default:
			return fmt.Errorf("%s: want 0 or 1, got %q", f.env, v)
		}
	}
	durs := []struct {
		env string
		to  *time.Duration
	}{
		{"PARTY_MOCK_START_DELAY", &opt.StartDelay},
		{"PARTY_MOCK_ENTER_GUARD", &opt.EnterGuard},
		{"PARTY_MOCK_CLAUDE_PAREN_AFTER", &opt.ParenAfter},
		{"PARTY_MOCK_NOTIFY_DELAY", &opt.NotifyDelay},
		{"PARTY_MOCK_GEMINI_PASTE_GUARD", &opt.PasteGuard},
		{"PARTY_MOCK_CLAUDE_FIRST_PASTE", &opt.FirstPaste},
	}
	for _, d := range durs {
		if v := getenv(d.env); v != "" {
			x, err := config.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", d.env, err)
			}
			*d.to = x
		}
	}
	return nil
}

func personaName(name string) string {
	switch name {
	case "claude", "codex", "gemini":
		return name
	}
	return "generic"
}
