// Package dash is party's live dashboard: what every agent of every party
// session is doing, with the supervisor's runtimes and open triggers, the
// review coordinator's state and evidence, and the team's tasks.
//
// Its parts:
//
//   - Model (model.go) is what the dashboard shows, plain data that
//     party dash --json prints as it is.
//   - Update (update.go) is the pure reducer: Update(model, event) is the
//     model after one Event (panes listed, an agent's hook event, a screen
//     read, a queue counted, the supervisor's, the coordinator's or the
//     team's records read, a clock tick). Agent states come from the
//     agents' own events first and from their screens second, as
//     core/observe reads them.
//   - Render (view.go) draws a model as text for a terminal of a given
//     size, with the UI state (selection, filter, help, talk prompt).
//   - Run (program.go) is the Bubble Tea program: it applies the events
//     it is sent, renders, and turns keys into Actions (jump to a pane,
//     talk to an agent); RunFed runs it fed by a Feed's Watch.
//   - Feed (feed.go) reads the sessions into Events: once (Snapshot) or
//     as they change (Watch, one watcher per session over a tmux
//     control-mode client, feed_watch.go). What it reads of a session
//     (feed_read.go): its panes, the events its agents' hooks logged, each
//     agent's screen read with its profile, the sends and talks queued
//     for each pane, the supervisor's records (through its API while it
//     runs), the review coordinator's state and the team's tasks, the
//     files without a wake-up of their own re-read when their size or
//     time changed. Stream (stream.go) writes the model as it changes,
//     a line of JSON each time, for a dashboard on another host.
//
// What the Feed reads with (the tmux server, the sessions to show, the
// agents' profiles, the supervisor's client, the team's store) and what
// the actions do are core/party's wiring (core/party/dash.go).
package dash
