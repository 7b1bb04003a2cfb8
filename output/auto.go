package output

import "github.com/sase-cep/sase"

// AutoSink is what workers = auto knows of f's writer under limit (0:
// none), by how the format registered it: rows the workers encode, a
// count without a limit they count in bulk, else each match through the
// ordered merge (sase.AutoWorkers).
func (f Format) AutoSink(limit int64) sase.SinkKind {
	switch {
	case !f.TakesChunks(limit):
		return sase.SinkRows
	case formats[f].chunks == Counted:
		return sase.SinkCount
	}
	return sase.SinkChunks
}
