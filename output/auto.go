package output

import "github.com/sase-cep/sase"

// AutoSink is what workers = auto knows of a writer in format f under a
// limit (0: none): JSON Lines and CSV rows the workers encode, a count
// without a limit they count in bulk, anything else goes through the
// ordered merge match by match (sase.AutoWorkers).
func AutoSink(f Format, limit int64) sase.SinkKind {
	switch {
	case f == JSONL || f == CSV:
		return sase.SinkChunks
	case f == Count && limit <= 0:
		return sase.SinkCount
	}
	return sase.SinkRows
}
