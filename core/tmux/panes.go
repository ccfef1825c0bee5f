package tmux

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/partyhq/party/core/mux"
)

var _ mux.Multiplexer = (*Client)(nil)

var paneFields = []string{
	"#{pane_id}", "#{session_name}", "#{window_id}", "#{window_index}", "#{pane_index}",
	"#{@party_role}", "#{@party_agent}", "#{pane_pid}", "#{pane_dead}", "#{pane_dead_status}",
	"#{pane_current_command}", "#{pane_in_mode}", "#{alternate_on}", "#{pane_width}", "#{pane_height}",
	"#{@party_hooks}", "#{window_name}", "#{pid}", // the server's pid last (reapZombies)
}

// parsePane is the pane of row, its command named as its process names
// it (currentCommand).
func parsePane(row []string) mux.Pane {
	p := parsePaneAsIs(row)
	p.CurrentCommand = currentCommand(p.CurrentCommand, p.PID)
	return p
}

// parsePaneAsIs is the pane of row as tmux names it.
func parsePaneAsIs(row []string) mux.Pane {
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return mux.Pane{
		ID: row[0], Session: row[1], WindowID: row[2], WindowIndex: n(row[3]), Index: n(row[4]),
		Role: row[5], Agent: row[6], PID: n(row[7]), Dead: row[8] == "1", DeadStatus: row[9],
		CurrentCommand: row[10], InMode: row[11] == "1", AltScreen: row[12] == "1",
		Width: n(row[13]), Height: n(row[14]), Hooks: row[15], WindowName: row[16],
	}
}

// ListPanes lists every pane of session in window, then pane order.
func (c *Client) ListPanes(ctx context.Context, session string) ([]mux.Pane, error) {
	args := []string{"list-panes", "-s", "-t", exactSession(session)}
	rows, err := c.Query(ctx, paneFields, args...)
	if err != nil {
		return nil, fmt.Errorf("list panes of %q: %w", session, err)
	}
	if c.reapZombies(rows) {
		if rows, err = c.Query(ctx, paneFields, args...); err != nil {
			return nil, fmt.Errorf("list panes of %q: %w", session, err)
		}
	}
	panes := make([]mux.Pane, len(rows))
	for i, r := range rows {
		panes[i] = parsePane(r)
	}
	return panes, nil
}

// ListedPane is a pane as tmux names it in a listing (ListPanesAsIs), and
// when its window last printed.
type ListedPane struct {
	mux.Pane
	// Activity is the window's window_activity: the second (Unix time)
	// of the last output of any of its panes, detached or not.
	Activity int64
}

// ListPanesAsIs lists every pane of session as tmux names them, in window,
// then pane order: ListPanes without what it reads from /proc. Its
// CurrentCommand is tmux's (cut at a space of the program's path), and a
// pane whose process is a zombie the server did not reap (tmux #4559)
// shows alive. One query, for those who look often and compare.
func (c *Client) ListPanesAsIs(ctx context.Context, session string) ([]ListedPane, error) {
	fields := append(slices.Clone(paneFields), "#{window_activity}")
	rows, err := c.Query(ctx, fields, "list-panes", "-s", "-t", exactSession(session))
	if err != nil {
		return nil, fmt.Errorf("list panes of %q: %w", session, err)
	}
	panes := make([]ListedPane, len(rows))
	for i, r := range rows {
		activity, _ := strconv.ParseInt(r[len(paneFields)], 10, 64)
		panes[i] = ListedPane{Pane: parsePaneAsIs(r), Activity: activity}
	}
	return panes, nil
}

// Pane describes the pane with id.
func (c *Client) Pane(ctx context.Context, id string) (mux.Pane, error) {
	for try := 0; ; try++ {
		rows, err := c.Query(ctx, paneFields, "display-message", "-p", "-t", id)
		if err != nil {
			return mux.Pane{}, fmt.Errorf("pane %s: %w", id, err)
		}
		if len(rows) != 1 || rows[0][0] != id {
			return mux.Pane{}, fmt.Errorf("pane %s: %w", id, mux.ErrNoPane)
		}
		if try > 0 || !c.reapZombies(rows) {
			return parsePane(rows[0]), nil
		}
	}
}

// reapZombies works around tmux 3.3a-3.5 built with utempter (tmux issue
// #4559) for every pane of rows, see reapZombie, and reports true when it
// poked the server, so the caller lists again.
func (c *Client) reapZombies(rows [][]string) bool {
	reaped := false
	for _, r := range rows {
		if r[8] == "1" && r[9] != "" { // pane_dead, pane_dead_status: tmux reaped it
			continue
		}
		pid, _ := strconv.Atoi(r[7])
		if server, err := strconv.Atoi(r[len(paneFields)-1]); err == nil && reapZombie(pid, server) {
			reaped = true
		}
	}
	return reaped
}

// reapZombie works around tmux 3.3a-3.5 built with utempter (tmux issue
// #4559): a pane's process pid can stay a zombie that the server never
// reaps, so the pane never shows dead, or shows dead without its exit
// status. When pid is a zombie it sends the tmux server (process server)
// SIGCHLD, which makes it reap, until pid is gone or 50 tries, and reports
// true; otherwise it does nothing and reports false. This is party's one
// zombie-reaping loop.
func reapZombie(pid, server int) bool {
	if server <= 0 || !IsZombie(pid) {
		return false
	}
	for i := 0; i < 50 && IsZombie(pid); i++ {
		_ = syscall.Kill(server, syscall.SIGCHLD)
		runtime.Gosched()
	}
	return true
}

// currentCommand corrects tmux's pane_current_command for a program whose
// path holds a space: tmux names the foreground program by its argv[0] cut
// at the first space ("/home/John Smith/bin/claude" is "John"). When the
// foreground process of pane pid (Linux: /proc) has such an argv[0], it is
// the base name of the whole of it; otherwise tmux's value stands.
func currentCommand(tmuxValue string, pid int) string {
	if pid <= 0 || runtime.GOOS != "linux" {
		return tmuxValue
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return tmuxValue
	}
	// The fields after the command name (in parentheses): state, ppid,
	// pgrp, session, tty_nr, tpgid (the terminal's foreground group).
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(f) < 6 {
		return tmuxValue
	}
	fg, err := strconv.Atoi(f[5])
	if err != nil || fg <= 0 {
		return tmuxValue
	}
	key := commandKey{fg, tmuxValue}
	commands.Lock()
	name, ok := commands.names[key]
	commands.Unlock()
	if ok {
		return name
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(fg) + "/cmdline")
	if err != nil {
		return tmuxValue
	}
	argv0, _, _ := strings.Cut(string(cmdline), "\x00")
	name = commandName(tmuxValue, argv0)
	commands.Lock()
	if len(commands.names) >= maxCommands {
		clear(commands.names)
	}
	commands.names[key] = name
	commands.Unlock()
	return name
}

// commands remembers what currentCommand made of a foreground process
// that tmux named so, so that a scan of many panes reads the argv of each
// once (a process's argv[0] stays; a pid taken again by another program is
// named otherwise by tmux too).
var commands = struct {
	sync.Mutex
	names map[commandKey]string
}{names: map[commandKey]string{}}

type commandKey struct {
	pid       int
	tmuxValue string
}

// maxCommands bounds commands: past it, it starts again.
const maxCommands = 4096

// commandName is the program name of argv0 when tmux's value is argv0 cut
// at its first space, else tmux's value.
func commandName(tmuxValue, argv0 string) string {
	head, _, spaced := strings.Cut(strings.TrimLeft(argv0, "-"), " ")
	if !spaced || tmuxValue != filepath.Base(head) {
		return tmuxValue
	}
	return filepath.Base(strings.TrimLeft(argv0, "-"))
}

// IsZombie reports whether process pid has exited but was not reaped.
// Linux only (it reads /proc); elsewhere it says false.
func IsZombie(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// Inspect describes the pane and captures its screen with one tmux
// process.
func (c *Client) Inspect(ctx context.Context, id string) (mux.Pane, string, error) {
	p, screen, reaped, err := c.inspect(ctx, id)
	if err == nil && reaped {
		p, screen, _, err = c.inspect(ctx, id) // once: the zombie is gone
	}
	return p, screen, err
}

func (c *Client) inspect(ctx context.Context, id string) (mux.Pane, string, bool, error) {
	fsep, rsep := c.seps()
	out, err := c.Run(ctx, "display-message", "-p", "-t", id, strings.Join(paneFields, fsep)+rsep, cmdSep,
		"capture-pane", "-p", "-J", "-t", id)
	if err != nil {
		return mux.Pane{}, "", false, fmt.Errorf("pane %s: %w", id, err)
	}
	head, screen, ok := strings.Cut(string(out), rsep)
	row := strings.Split(head, fsep)
	if !ok || len(row) != len(paneFields) || row[0] != id {
		return mux.Pane{}, "", false, fmt.Errorf("pane %s: %w", id, mux.ErrNoPane)
	}
	reaped := c.reapZombies([][]string{row})
	return parsePane(row), trimCapture(strings.TrimPrefix(screen, "\n")), reaped, nil
}

// Capture returns the pane's screen plus history lines of scrollback,
// wrapped lines joined and trailing spaces removed.
func (c *Client) Capture(ctx context.Context, id string, history int) (string, error) {
	out, err := c.Run(ctx, "capture-pane", "-p", "-J", "-t", id, "-S", strconv.Itoa(-history))
	if err != nil {
		return "", fmt.Errorf("capture %s: %w", id, err)
	}
	return trimCapture(string(out)), nil
}

// Rows reads the pane's screen and up to history rows of scrollback with
// one tmux process, so that the scrollback's size and the rows are of one
// instant: its size, the rows as they are (trailing spaces kept, which
// -J keeps too), then the rows with wrapped rows joined.
func (c *Client) Rows(ctx context.Context, id string, history int) (mux.Rows, error) {
	fsep, rsep := c.seps()
	start := strconv.Itoa(-history)
	out, err := c.Run(ctx, "display-message", "-p", "-t", id, "#{pane_id}"+fsep+"#{history_size}"+fsep+"#{alternate_on}"+fsep+"#{history_limit}"+rsep, cmdSep,
		"capture-pane", "-p", "-N", "-t", id, "-S", start, cmdSep,
		"display-message", "-p", "-t", id, rsep, cmdSep,
		"capture-pane", "-p", "-J", "-t", id, "-S", start)
	if err != nil {
		return mux.Rows{}, fmt.Errorf("capture %s: %w", id, err)
	}
	head, rest, ok1 := strings.Cut(string(out), rsep+"\n")
	raw, joined, ok2 := strings.Cut(rest, rsep+"\n")
	if !ok1 || !ok2 {
		return mux.Rows{}, fmt.Errorf("capture %s: %w", id, mux.ErrNoPane)
	}
	return parseRows(id, head, fsep, raw, joined, history)
}

// parseRows reads the output of Rows' commands for a capture of up to
// history rows of scrollback: head holds the pane's id, the scrollback's
// size, whether the alternate screen is on and the scrollback's limit,
// separated by fsep; raw the rows (-N) and joined the same rows joined
// (-J), one a line.
func parseRows(id, head, fsep, raw, joined string, history int) (mux.Rows, error) {
	f := strings.Split(strings.TrimSuffix(head, "\n"), fsep)
	if len(f) != 4 || f[0] != id {
		return mux.Rows{}, fmt.Errorf("capture %s: %w", id, mux.ErrNoPane)
	}
	hist, _ := strconv.Atoi(f[1])
	limit, _ := strconv.Atoi(f[3])
	rows := strings.Split(strings.TrimSuffix(raw, "\n"), "\n")
	lines := strings.Split(strings.TrimSuffix(joined, "\n"), "\n")
	lineOf, ok := alignRows(rows, lines)
	if !ok {
		return mux.Rows{}, fmt.Errorf("capture %s: the joined rows do not match the rows: %w", id, ErrCommand)
	}
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return mux.Rows{History: hist, Limit: limit, Alt: f[2] == "1", First: hist - min(max(history, 0), hist),
		Raw: rows, Lines: lines, LineOf: lineOf}, nil
}

// alignRows maps each row to the joined line that holds it: -J writes a
// wrapped row and the rows it continues on one line, each as -N writes it.
func alignRows(rows, lines []string) ([]int, bool) {
	of := make([]int, 0, len(rows))
	r := 0
	for j, l := range lines {
		acc := ""
		for {
			if r >= len(rows) {
				return nil, false
			}
			acc += rows[r]
			of = append(of, j)
			r++
			if acc == l {
				break
			}
			if !strings.HasPrefix(l, acc) {
				return nil, false
			}
		}
	}
	return of, r == len(rows)
}

// trimCapture removes the trailing spaces -J leaves on each line and the
// trailing newline.
func trimCapture(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// Paste loads text into a private buffer from stdin and pastes it into the
// pane in one tmux process: bracketed (-p) when the program asked for it,
// newlines kept as newlines (-r), the buffer deleted afterwards (-d).
func (c *Client) Paste(ctx context.Context, id string, text []byte) error {
	buf := "party-" + token()
	_, err := c.RunStdin(ctx, text,
		"load-buffer", "-b", buf, "-", cmdSep,
		"paste-buffer", "-p", "-r", "-d", "-b", buf, "-t", id)
	if err != nil {
		_, _ = c.Run(context.WithoutCancel(ctx), "delete-buffer", "-b", buf)
		return fmt.Errorf("paste into %s: %w", id, err)
	}
	return nil
}

// SendKey presses one named key in the pane.
func (c *Client) SendKey(ctx context.Context, id, key string) error {
	if _, err := c.Run(ctx, "send-keys", "-t", id, key); err != nil {
		return fmt.Errorf("press %s in %s: %w", key, id, err)
	}
	return nil
}

// LeaveMode leaves copy mode or any other pane mode.
func (c *Client) LeaveMode(ctx context.Context, id string) error {
	if _, err := c.Run(ctx, "copy-mode", "-q", "-t", id); err != nil {
		return fmt.Errorf("leave mode in %s: %w", id, err)
	}
	return nil
}

// exactSession targets a session by exact name: "=name:" stops tmux from
// matching a prefix or pattern, and the trailing colon makes it a session
// target where a window or pane target is expected.
func exactSession(name string) string { return "=" + name + ":" }

// KillPane kills pane id and what runs in it.
func (c *Client) KillPane(ctx context.Context, id string) error {
	if _, err := c.Run(ctx, "kill-pane", "-t", id); err != nil {
		return fmt.Errorf("kill pane %s: %w", id, err)
	}
	return nil
}
