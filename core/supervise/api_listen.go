package supervise

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Serve answers on ln until ctx ends, then shuts down (letting the calls
// under way finish for a few seconds) and returns nil. tcp requires the
// bearer token. Serve closes ln (a ListenUnix socket's file goes with it).
func (s *Server) Serve(ctx context.Context, ln net.Listener, tcp bool) error {
	srv := &http.Server{
		Handler:           s.Handler(tcp),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       readTimeout,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(LogWriter(s.logf), "", 0),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logf("api: %v", err)
	}
	return nil
}

// LogWriter sends an http.Server's log lines (its ErrorLog's) to a
// Printf-like func; a nil one drops them.
type LogWriter func(format string, args ...any)

func (f LogWriter) Write(p []byte) (int, error) {
	if f != nil {
		f("%s", strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

// ListenUnix listens on the unix socket path, which only its owner can
// open (0600, whatever the umask). A socket file left at path by a process
// gone is replaced; a socket someone answers on is ErrRunning; any other
// file there is an error and stays. The parent directory must exist.
// Closing the listener removes the socket.
func ListenUnix(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("supervisor socket %s: %s is not a directory", path, dir)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	// Bind in a private directory, make the socket 0600, then link it to
	// path: nobody else can connect before its mode is set, and a file
	// that appeared at path meanwhile is not clobbered.
	tmp, err := os.MkdirTemp(dir, ".sv")
	if err != nil {
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	defer os.RemoveAll(tmp)
	bound := filepath.Join(tmp, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: bound, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		ln.Close()
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	if err := os.Chmod(bound, 0o600); err != nil {
		return fail(err)
	}
	if err := os.Link(bound, path); err != nil {
		return fail(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	return &unixListener{UnixListener: ln, path: path, fi: fi}, nil
}

// removeStale removes the socket at path if nobody answers on it.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("supervisor socket %s: a file that is not a socket is there (%s); not removing it", path, fi.Mode().Type())
	}
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("supervisor socket %s: %w (something answers on it)", path, ErrRunning)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("supervisor socket %s: is it stale? %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("supervisor socket %s: removing the stale socket: %w", path, err)
	}
	return nil
}

// unixListener is ListenUnix's listener: its address is path, and closing
// it removes path if path is still its socket.
type unixListener struct {
	*net.UnixListener
	path string
	fi   os.FileInfo
	once sync.Once
}

func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() {
		if fi, e := os.Lstat(l.path); e == nil && os.SameFile(fi, l.fi) {
			os.Remove(l.path)
		}
	})
	return err
}

// ListenTCP listens on addr, which must be a loopback address:
// 127.0.0.0/8, ::1 or localhost (which is 127.0.0.1). Any other host, and
// no host (every interface), is ErrBadInput.
func ListenTCP(addr string) (net.Listener, error) {
	hostport, err := CheckListen(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("supervisor address %q: %w", addr, err)
	}
	return ln, nil
}

// CheckListen says whether addr is a loopback HOST:PORT the API may listen
// on, and returns it as it is bound (localhost is 127.0.0.1, never looked
// up); else an error wrapping ErrBadInput.
func CheckListen(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("supervisor address %q: %v: %w", addr, err, ErrBadInput)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	} else if ip, err := netip.ParseAddr(host); err != nil || !ip.Unmap().IsLoopback() || ip.Zone() != "" {
		return "", fmt.Errorf("supervisor address %q: the API listens on TCP on a loopback address only (127.0.0.0/8, ::1, localhost): %w", addr, ErrBadInput)
	}
	return net.JoinHostPort(host, port), nil
}
