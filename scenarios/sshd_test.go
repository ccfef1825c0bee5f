package scenarios

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/partyhq/party/mockagents/realagent"
)

// sshdKey is the key of a scenario's sshd slot in its values (setup
// makes the slot; sshd start fills it).
type sshdKey struct{}

// sshdSlot holds a scenario's sshd once started.
type sshdSlot struct{ s *sshdState }

// sshdState is a scenario's sshd: its process, its port and what its
// teardown undoes.
type sshdState struct {
	cmd     *exec.Cmd
	done    chan struct{}
	port    int
	token   string // marks every process of its sessions (realagent.Reap)
	sock    string // the remote's tmux socket name
	tmpdir  string // the remote's TMUX_TMPDIR and XDG_RUNTIME_DIR
	remote  string // the remote's directory: its HOME, state, work dir
	logPath string
	config  string // its sshd_config: a start after a stop runs it again
}

// sshdBinary is where Debian's openssh-server puts sshd, which must be
// run by its absolute path.
const sshdBinary = "/usr/sbin/sshd"

// cmdSSHD starts (start) or stops (stop) a real OpenSSH server for the
// scenario (startSSHD): on a free loopback port, with its own host key and a user key
// made by ssh-keygen, whose sessions run as a second host ("remote") of
// their own under $WORK/remote: HOME, XDG dirs, runtime and tmux dirs,
// tmux socket and mock log, and the scenario's PATH (the same party). It
// writes $HOME/.ssh/config with Host remote, and sets $SSHD_PORT,
// $REMOTE (the remote's $WORK/remote), $REMOTE_SOCK and $REMOTE_TMPDIR
// (its tmux socket's name and TMUX_TMPDIR, to look at it without ssh). The server and every process its
// sessions started are gone when the scenario ends. sshd missing is a
// failure, never a skip. A start after a stop starts the same server
// again (its port, keys and remote), as a host whose link comes back.
func cmdSSHD(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || (args[0] != "start" && args[0] != "stop" && args[0] != "cut" && args[0] != "silent") {
		ts.Fatalf("usage: sshd start|stop|cut|silent")
	}
	if args[0] == "silent" {
		silentPort(ts)
		return
	}
	if args[0] == "stop" || args[0] == "cut" {
		slot := ts.Value(sshdKey{}).(*sshdSlot)
		if slot.s == nil {
			ts.Fatalf("sshd %s: not started", args[0])
		}
		if args[0] == "cut" {
			ts.Logf("sshd cut: killed %d connection processes", slot.s.cut())
		}
		slot.s.stop()
		return
	}
	slot := ts.Value(sshdKey{}).(*sshdSlot)
	if slot.s != nil {
		select {
		case <-slot.s.done: // stopped: the same server again
			ts.Check(slot.s.run())
			return
		default:
		}
		ts.Fatalf("sshd start: already started on port %d", slot.s.port)
	}
	slot.s = startSSHD(sshdHost{Alias: "remote", Work: ts.Getenv("WORK"), Home: ts.Getenv("HOME"), Path: ts.Getenv("PATH"), Fatalf: ts.Fatalf, Defer: ts.Defer})
	ts.Setenv("SSHD_PORT", strconv.Itoa(slot.s.port))
	ts.Setenv("REMOTE", slot.s.remote)
	ts.Setenv("REMOTE_SOCK", slot.s.sock)
	ts.Setenv("REMOTE_TMPDIR", slot.s.tmpdir)
}

// sshdHost is what startSSHD takes: the Host alias the client's
// $HOME/.ssh/config gets for it, the directory its files and the remote
// go in (Work/sshd, Work/remote), the client's home, the PATH of its
// sessions, and how a failure is reported and a teardown registered.
type sshdHost struct {
	Alias, Work, Home, Path string
	Fatalf                  func(format string, args ...any)
	Defer                   func(func())
}

// startSSHD starts a real OpenSSH server on a free loopback port, with
// its own host key and a user key made by ssh-keygen, whose sessions run
// as a host of their own under Work/remote (HOME, XDG dirs, runtime and
// tmux dirs, tmux socket and mock log, and the PATH given), and appends
// Host ALIAS to the client's $HOME/.ssh/config. Its teardown (the
// server, its tmux server and every process its sessions started) is
// registered with Defer. sshd missing is a failure, never a skip.
func startSSHD(h sshdHost) *sshdState {
	check := func(err error) {
		if err != nil {
			h.Fatalf("sshd: %v", err)
		}
	}
	if _, err := os.Stat(sshdBinary); err != nil {
		h.Fatalf("sshd: %v: the hosts scenarios need Debian's openssh-server (apt-get install -y openssh-server; .ci/run installs it)", err)
	}
	dir := filepath.Join(h.Work, "sshd")
	remote := filepath.Join(h.Work, "remote")
	for _, d := range []string{dir, filepath.Join(remote, "home"), filepath.Join(remote, "work"), filepath.Join(h.Home, ".ssh")} {
		check(os.MkdirAll(d, 0o700))
	}
	keygen := func(path, comment string) {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput()
		if err != nil {
			h.Fatalf("ssh-keygen %s: %v: %s", path, err, out)
		}
	}
	hostKey, userKey := filepath.Join(dir, "host_key"), filepath.Join(dir, "user_key")
	keygen(hostKey, "party-test-host")
	keygen(userKey, "party-test-user")
	pub, err := os.ReadFile(userKey + ".pub")
	check(err)
	authorized := filepath.Join(dir, "authorized_keys")
	check(os.WriteFile(authorized, pub, 0o600))
	if os.Geteuid() == 0 {
		// sshd as root needs its privilege separation directory, which
		// Debian's init scripts make and a container may lack.
		check(os.MkdirAll("/run/sshd", 0o755))
	}
	u, err := user.Current()
	check(err)

	var b [4]byte
	_, _ = rand.Read(b[:])
	s := &sshdState{remote: remote, done: make(chan struct{}), token: newToken(), sock: "pr" + hex.EncodeToString(b[:]),
		logPath: filepath.Join(dir, "sshd.log")}
	// The tmux socket and party's wake sockets need a short path.
	s.tmpdir, err = os.MkdirTemp("", "pr")
	check(err)
	h.Defer(s.teardown)

	env := map[string]string{
		"HOME":              filepath.Join(remote, "home"),
		"XDG_STATE_HOME":    filepath.Join(remote, "state"),
		"XDG_CONFIG_HOME":   filepath.Join(remote, "config"),
		"XDG_RUNTIME_DIR":   s.tmpdir,
		"TMUX_TMPDIR":       s.tmpdir,
		"PARTY_TMUX_SOCKET": s.sock,
		"PARTY_TMUX_CONFIG": os.DevNull,
		"PARTY_MOCK_LOG":    filepath.Join(remote, "mock.log"),
		"PATH":              h.Path,
		"LC_ALL":            "C.UTF-8",
		"TERM":              "xterm-256color",
		"GORACE":            "atexit_sleep_ms=0",
		realagent.TokenVar:  s.token,
	}
	var setenv []string
	for k, v := range env {
		if strings.ContainsAny(v, "\"\n") {
			h.Fatalf("sshd: %s=%q cannot go into sshd_config", k, v)
		}
		setenv = append(setenv, fmt.Sprintf("%q", k+"="+v))
	}
	for attempt := 0; ; attempt++ {
		s.port = freePort(h.Fatalf)
		config := filepath.Join(dir, "sshd_config")
		check(os.WriteFile(config, []byte(strings.Join([]string{
			"Port " + strconv.Itoa(s.port),
			"ListenAddress 127.0.0.1",
			"HostKey " + hostKey,
			"PidFile " + filepath.Join(dir, "sshd.pid"),
			"AuthorizedKeysFile " + authorized,
			"AllowUsers " + u.Username,
			"UsePAM no",
			"StrictModes no",
			"PubkeyAuthentication yes",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PermitRootLogin prohibit-password",
			"PermitUserEnvironment no",
			"AllowTcpForwarding no",
			"AllowAgentForwarding no",
			"X11Forwarding no",
			"PrintMotd no",
			"PrintLastLog no",
			"LogLevel VERBOSE",
			"SetEnv " + strings.Join(setenv, " "),
			"",
		}, "\n")), 0o600))
		s.config = config
		if err := s.run(); err == nil {
			break
		} else if attempt == 2 {
			h.Fatalf("%v", err)
		}
	}

	// The client side: Host remote, known by its own host key only.
	hostPub, err := os.ReadFile(hostKey + ".pub")
	check(err)
	knownHosts := filepath.Join(dir, "known_hosts")
	check(os.WriteFile(knownHosts, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", s.port, hostPub)), 0o600))
	sshConfig := strings.Join([]string{
		"Host " + h.Alias,
		"  HostName 127.0.0.1",
		"  Port " + strconv.Itoa(s.port),
		"  User " + u.Username,
		"  IdentityFile " + userKey,
		"  IdentitiesOnly yes",
		"  UserKnownHostsFile " + knownHosts,
		"  GlobalKnownHostsFile " + os.DevNull,
		"  StrictHostKeyChecking yes",
		"  BatchMode yes",
		"  LogLevel ERROR",
		"",
	}, "\n")
	f, err := os.OpenFile(filepath.Join(h.Home, ".ssh", "config"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	check(err)
	_, err = f.WriteString(sshConfig)
	check(errors.Join(err, f.Close()))
	return s
}

// silentPort listens on a loopback port that takes connections and never
// says a word (a host whose sshd hangs), until the scenario ends, and sets
// $SILENT_PORT.
func silentPort(ts *testscript.TestScript) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, unanswered
		}
	}()
	ts.Defer(func() {
		_ = ln.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	ts.Setenv("SILENT_PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}

// freePort is a loopback TCP port free a moment ago.
func freePort(fatalf func(string, ...any)) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// run starts the server from its config and waits until it listens; a
// server that does not is stopped, with its log in the error.
func (s *sshdState) run() error {
	s.done = make(chan struct{})
	s.cmd = exec.Command(sshdBinary, "-D", "-f", s.config, "-E", s.logPath)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	cmd, done := s.cmd, s.done
	go func() { _ = cmd.Wait(); close(done) }()
	if err := s.awaitListening(); err != nil {
		s.stop() // the port was taken meanwhile
		log, _ := os.ReadFile(s.logPath)
		return fmt.Errorf("sshd: %v; its log:\n%s", err, log)
	}
	return nil
}

// awaitListening waits until sshd takes connections on its port, or
// exits.
func (s *sshdState) awaitListening() error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("sshd exited")
		default:
		}
		if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("sshd did not listen within 10s")
}

// cut kills (SIGKILL) the server's connection processes, each sshd its
// listener forked and theirs (each in a session of its own, which stop
// leaves alone), as a network that broke would: the clients' connections
// end at once, while the programs they ran there go on. It returns how
// many it killed.
func (s *sshdState) cut() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so after the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var kill func(pid int) int
	kill = func(pid int) int {
		n := 0
		for _, c := range children[pid] {
			comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c), "comm"))
			if strings.TrimSpace(string(comm)) != "sshd" {
				continue // the programs the sessions run go on
			}
			n += kill(c)
			if syscall.Kill(c, syscall.SIGKILL) == nil {
				n++
			}
		}
		return n
	}
	return kill(s.cmd.Process.Pid)
}

// stop ends the server (its listener; sessions go with the teardown).
func (s *sshdState) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// teardown kills the remote's tmux server, the server and every process
// its sessions left (marked with the token), and removes the short dir.
func (s *sshdState) teardown() {
	getenv := func(k string) string {
		switch k {
		case "SOCK":
			return s.sock
		case "TMUX_TMPDIR":
			return s.tmpdir
		}
		return ""
	}
	killServer(getenv, s.sock)
	s.stop()
	_, _ = realagent.Reap(s.token)
	os.RemoveAll(s.tmpdir)
}

// sshMain is the scenarios' ssh: the real one, reading $HOME/.ssh/config
// (-F). OpenSSH reads the config of the home the password database names,
// never $HOME's, and a scenario's home is its own.
func sshMain() int {
	self, _ := os.Executable()
	real := ""
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, "ssh")
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		if me, err := os.Stat(self); err == nil && os.SameFile(fi, me) {
			continue
		}
		real = p
		break
	}
	if real == "" {
		fmt.Fprintln(os.Stderr, "ssh: no ssh on PATH but the scenarios' own (apt-get install -y openssh-client)")
		return 255
	}
	argv := append([]string{"ssh", "-F", filepath.Join(os.Getenv("HOME"), ".ssh", "config")}, os.Args[1:]...)
	err := syscall.Exec(real, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "ssh: exec %s: %v\n", real, err)
	return 255
}
