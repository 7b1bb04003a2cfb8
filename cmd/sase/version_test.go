package main

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"go install module@version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, true, "v1.2.0"},
		{"go run", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true,
			"devel (no revision recorded: go run records none; go build or go install in a checkout does)"},
		{"a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", rev, "vcs.modified", "false")}, true,
			"devel (revision 0123456789ab)"},
		{"a modified checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", rev, "vcs.modified", "true")}, true,
			"devel (revision 0123456789ab, modified)"},
		{"a version with the revision in it", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20250101120000-0123456789ab+dirty"}, Settings: settings("vcs.revision", rev, "vcs.modified", "true")}, true,
			"v0.0.0-20250101120000-0123456789ab+dirty"},
		{"no build information", nil, false, "unknown (built without module support)"},
	} {
		if got := version(tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
