package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
)

// TestWritevPipe: a file's vectored write on a pipe, which takes less
// than a writev hands it (its buffer is 64 KB) and makes it wait, writes
// every byte in order: more buffers than one writev takes (IOV_MAX),
// empty ones among them. A pipe whose reader has gone fails it with the
// error the file's Write gives.
func TestWritevPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	vec := BuffersOf(w)
	if vec == nil {
		t.Fatal("no vectored write for a pipe")
	}
	var bufs [][]byte
	var want []byte
	for i := range 3000 {
		b := bytes.Repeat([]byte{byte('a' + i%26)}, (i*37)%2000)
		bufs, want = append(bufs, b), append(want, b...)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	n, err := vec.WriteBuffers(bufs)
	w.Close()
	if b := <-got; err != nil || n != int64(len(want)) || !bytes.Equal(b, want) {
		t.Errorf("WriteBuffers = %d, %v; read %d bytes, equal %v; want %d", n, err, len(b), bytes.Equal(b, want), len(want))
	}
	r.Close()

	r, w, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	_, plainErr := w.Write([]byte("x"))
	n, err = BuffersOf(w).WriteBuffers([][]byte{[]byte("abc"), []byte("def")})
	if n != 0 || !errors.Is(err, syscall.EPIPE) || err.Error() != plainErr.Error() {
		t.Errorf("to a closed pipe: %d, %v; Write's error %v", n, err, plainErr)
	}
}
