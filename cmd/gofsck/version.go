package main

import (
	"runtime/debug"
	"strings"
	"time"
)

// baseVersion is the release this source is, or the one it leads to: a
// build that is not of a tagged module version reports
// baseVersion+"-dev" and the commit it was built from.
const baseVersion = "0.1.0"

// unknownDate stands for the date when the build records none.
const unknownDate = "unknown date"

// versionInfo is what -V, the banner and the JSON report say: "gofsck
// VERSION (DATE)", the shape of e2fsck's "e2fsck 1.47.0 (5-Feb-2023)".
type versionInfo struct {
	version string // "0.1.0", or "0.1.0-dev+a614d8d12345" (".dirty" for a modified tree)
	date    string // the commit's date as e2fsck writes its release date, "1-Dec-2026"
}

// String is the -V line without the program name.
func (v versionInfo) String() string { return v.version + " (" + v.date + ")" }

// stampedVersion and stampedDate, when set at link time, are the
// version and date -V prints, whatever the build information says: a
// distribution building from a release tarball (no git, so no VCS stamp)
// names its version with
//
//	go build -ldflags "-X main.stampedVersion=0.1.0 -X main.stampedDate=5-Dec-2026" ./cmd/gofsck
//
// (scripts/build.sh does this from VERSION and DATE).
var stampedVersion, stampedDate string

// buildVersion reads the version stamped into the running binary.
func buildVersion() versionInfo {
	if stampedVersion != "" {
		v := versionInfo{version: stampedVersion, date: stampedDate}
		if v.date == "" {
			v.date = unknownDate
		}
		return v
	}
	info, ok := debug.ReadBuildInfo()
	return versionFrom(info, ok)
}

// parsePseudo splits a Go pseudo-version (v0.0.0-20261201233751-a614d8d12345,
// v0.1.1-0.20261201233751-a614d8d12345, with the "+dirty" go build adds
// for a modified tree) into its commit time and revision.
func parsePseudo(v string) (stamp, rev string, dirty, ok bool) {
	v, dirty = strings.CutSuffix(v, "+dirty")
	i := strings.LastIndexByte(v, '-')
	if i < 15 {
		return "", "", false, false
	}
	stamp, rev = v[i-14:i], v[i+1:]
	if len(rev) != 12 || strings.Trim(rev, "0123456789abcdef") != "" ||
		strings.Trim(stamp, "0123456789") != "" || !strings.ContainsAny(v[i-15:i-14], "-.") {
		return "", "", false, false
	}
	return stamp, rev, dirty, true
}

// versionFrom derives the version from build information: a tagged
// module version as is (go install gofsck/cmd/gofsck@v0.1.0), dated by
// the commit when the build recorded it; anything else (a build from a
// work tree, or of an untagged commit) is baseVersion-dev with the
// revision and date from the VCS stamp (go build's vcs.* settings) or
// from the pseudo-version; without either, baseVersion-dev and an
// unknown date.
func versionFrom(info *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{version: baseVersion + "-dev", date: unknownDate}
	if !ok || info == nil {
		return v
	}
	var rev, when string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	mv := info.Main.Version
	stamp, prev, pdirty, pseudo := parsePseudo(mv)
	switch {
	case mv != "" && mv != "(devel)" && !pseudo:
		v.version = strings.TrimPrefix(mv, "v")
	case rev != "":
		v.version += "+" + rev[:min(12, len(rev))]
		if modified {
			v.version += ".dirty"
		}
	case pseudo:
		v.version += "+" + prev
		if pdirty {
			v.version += ".dirty"
		}
		if t, err := time.Parse("20060102150405", stamp); err == nil && when == "" {
			when = t.Format(time.RFC3339)
		}
	}
	if t, err := time.Parse(time.RFC3339, when); err == nil {
		v.date = t.UTC().Format("2-Jan-2006")
	}
	return v
}
