package mcp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress tells the progress token of req, when its client gave one,
// that the call waits for what: at once, then every ProgressEvery with
// the time waited, until the returned stop is called (its goroutine has
// ended when stop returns) or ctx ends. Without a token it does nothing.
func (s *Server) progress(ctx context.Context, req *sdk.CallToolRequest, what string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := s.clock.Now()
	go func() {
		defer close(done)
		for n := 1; ; n++ {
			waited := s.clock.Now().Sub(start).Round(time.Second)
			// A notification the client cannot take is no reason to
			// stop the call: it goes on without.
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
				Progress: float64(n), Message: fmt.Sprintf("%s (%s)", what, waited)})
			if s.clock.Sleep(ctx, ProgressEvery) != nil {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}
