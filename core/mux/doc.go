// Package mux is the interface core needs from a terminal multiplexer.
// core/tmux implements it on a real tmux server; sim implements it in memory.
package mux
