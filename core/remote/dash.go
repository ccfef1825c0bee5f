package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/dash"
	"github.com/partyhq/party/core/hosts"
)

// The rhythm of a host's part of the dashboard. dashWait bounds one look
// (Dash), and the first line of a watch (DashWatch): ssh's ConnectTimeout
// (5 s) and the party there reading its sessions. The party there writes
// its model when it changed, at most every StreamEvery, and at least every
// StreamBeat; a watch that heard nothing for StreamBeat+streamSilence
// takes the host for offline, and connects again streamRetry after a
// connection ended.
const (
	dashWait      = 10 * time.Second
	StreamEvery   = time.Second
	StreamBeat    = 5 * time.Second
	streamSilence = 5 * time.Second
	streamRetry   = 5 * time.Second
)

// Dash is h's part of the dashboard read once (party dash --once): party
// dash --once --local --json there, run by ssh with argv (Party: the
// version checked), within dashWait. A host that does not answer, refuses
// the keys or runs another version is offline, with the error's code; one
// without a tmux server is online with no sessions. --local: the party
// there looks at no host of its own (nor back at this one).
//
// The agents' states are what the party there reads of its own panes,
// hooks and screens (tmux operations of that host, as party check), which
// its supervisors' API does not carry: a runtime's status is the
// supervisor's, and a session without a supervisor has no API.
func (c Caller) Dash(ctx context.Context, h hosts.Host) dash.Host {
	start := c.Clock.Now()
	ctx, cancel := context.WithTimeout(ctx, dashWait)
	defer cancel()
	var m dash.Model
	err := c.Party(ctx, h, nil, &m, "dash", "--once", "--local")
	var re *hosts.RemoteError
	if errors.As(err, &re) && re.Code == "NO_SERVER" {
		err, m.Sessions = nil, nil
	}
	return c.dashHost(h, m, err, c.Clock.Now().Sub(start))
}

// dashHost is h's part of the dashboard after a look that found m, or
// err, and took took.
func (c Caller) dashHost(h hosts.Host, m dash.Model, err error, took time.Duration) dash.Host {
	out := dash.Host{Name: h.Name, SSH: h.Dest, Sessions: []dash.Session{}, Elapsed: took.Milliseconds()}
	if err != nil {
		out.Error = &dash.HostError{Code: c.Classify(err), Message: err.Error()}
		return out
	}
	if m.Sessions != nil {
		out.Sessions = m.Sessions
	}
	out.Online, out.Seen = true, c.Clock.Now()
	return out
}

// DashWatch follows h's part of the dashboard as it changes, over one ssh
// connection for as long as it lasts (party dash --stream there, the
// version checked: a line of the model each time it changed), calling
// seen with each line, and with the host offline when the connection
// ended or stayed silent past StreamBeat+streamSilence (the first line:
// dashWait); it connects again after streamRetry, and returns when ctx
// ends.
func (c Caller) DashWatch(ctx context.Context, h hosts.Host, seen func(dash.Host)) {
	for {
		if err := c.dashStream(ctx, h, seen); err != nil && ctx.Err() == nil {
			seen(c.dashHost(h, dash.Model{}, err, 0))
		}
		if c.Clock.Sleep(ctx, streamRetry) != nil {
			return
		}
	}
}

// dashStream is one connection of DashWatch: it returns why it ended.
func (c Caller) dashStream(ctx context.Context, h hosts.Host, seen func(dash.Host)) error {
	argv, err := h.Argv("dash", CallerFlag+"="+c.Version, "--stream", "--json")
	if err != nil {
		return err
	}
	start := c.Clock.Now()
	p, err := c.SSH.Start(argv)
	if err != nil {
		return err
	}
	// stdin stays open: its end tells the party there to stop.
	lines := make(chan []byte)
	go func() { // ends with ssh's stdout
		defer close(lines)
		sc := bufio.NewScanner(p)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	silence := c.Clock.NewTimer(dashWait)
	defer silence.Stop()
	var last []byte
	var took time.Duration
	killed := false
	for {
		select {
		case <-ctx.Done():
			p.Kill()
			for range lines {
			}
			_, _ = p.Wait()
			return ctx.Err()
		case <-silence.C():
			p.Kill() // then its lines end
			killed = true
		case b, ok := <-lines:
			if !ok {
				_ = p.Close()
				exit, stderr := p.Wait()
				if reported := reportedError(h.Name, last); reported != nil {
					return reported
				}
				if killed || exit != 0 {
					return hosts.Classify(h.Name, exit, stderr, killed)
				}
				return &hosts.Error{Host: h.Name, Reason: hosts.ReasonLost, Exit: exit, Stderr: "party dash --stream there ended"}
			}
			last = b
			var m dash.Model
			if json.Unmarshal(b, &m) != nil || m.Sessions == nil {
				continue // its error, reported once it exits
			}
			if took == 0 {
				took = c.Clock.Now().Sub(start)
			}
			seen(c.dashHost(h, m, nil, took))
			silence.Reset(StreamBeat + streamSilence)
		}
	}
}

// DashNamed is Dash of the host name names (HostOf); a name that names
// none is that host offline, with the error's code.
func (c Caller) DashNamed(ctx context.Context, cfg config.Config, name string) dash.Host {
	h, err := HostOf(cfg, name)
	if err != nil {
		return c.unnamed(name, err)
	}
	return c.Dash(ctx, h)
}

// DashWatchNamed is DashWatch of the host name names (HostOf); a name
// that names none is seen once, as that host offline with the error's
// code.
func (c Caller) DashWatchNamed(ctx context.Context, cfg config.Config, name string, seen func(dash.Host)) {
	h, err := HostOf(cfg, name)
	if err != nil {
		seen(c.unnamed(name, err))
		return
	}
	c.DashWatch(ctx, h, seen)
}

// unnamed is host name's part of the dashboard when it names no host
// (err).
func (c Caller) unnamed(name string, err error) dash.Host {
	return dash.Host{Name: name, Error: &dash.HostError{Code: c.Classify(err), Message: err.Error()}}
}
