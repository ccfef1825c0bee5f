// Package config is party's configuration: built-in defaults, then the
// global file ($XDG_CONFIG_HOME/party/config.json, else
// ~/.config/party/config.json), then the local file (./.party/config.json),
// then flags, which the caller applies. A file that is not valid JSON or has
// a value of the wrong type is an error naming the file, line and column;
// unknown keys are warnings.
package config
