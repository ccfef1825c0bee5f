// Command party runs teams of interactive AI coding agents in tmux panes.
package main
