package output

import "github.com/sase-cep/sase/query"

// AutoSink is what workers = auto knows of f's writer under limit (0:
// none), by how the format registered it: rows the workers encode, a
// count without a limit they count in bulk, else each match through the
// ordered merge (query.Query.AutoWorkers).
func (f Format) AutoSink(limit int64) query.SinkKind {
	switch {
	case !f.TakesChunks(limit):
		return query.SinkRows
	case formats[f].chunks == Counted:
		return query.SinkCount
	}
	return query.SinkChunks
}
