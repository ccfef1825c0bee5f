// Package iterm is party's side of iTerm2: whether a terminal gets tmux's
// control mode (Wanted), the view session a control-mode client attaches
// to (View: the session's own windows without party's background ones,
// which iTerm2 would open as tabs), and the dynamic profile that starts a
// party from a key (Profile, Install).
//
// Control mode (tmux -CC) turns every window of the attached session into
// an iTerm2 tab and every pane into a native split. party's background
// windows (the review coordinator, the supervisor, the recorder, the
// notifier, a detached switchboard) live in the session's own window list,
// where the rest of party finds them; so a control-mode client does not
// attach the session itself but a view session beside it, whose windows
// are links to the session's other windows (tmux link-window: the same
// windows and panes, not copies). The view carries @party_view_of, dies
// when its last client detaches (destroy-unattached, set by a
// client-attached hook), and its windows follow the size of the latest
// client (window-size latest, aggressive-resize off), which is iTerm2's
// window.
package iterm
