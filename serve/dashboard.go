package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

// The dashboard at / is static files embedded in the binary: no build
// step, no CDN; it reads the API as any client does.
//
//go:embed static
var static embed.FS

// dashboard serves / and /static/. They hold no data, so they are served
// without the token: the page asks for it and sends it with each API call.
func (sv *Server) dashboard() {
	files, _ := fs.Sub(static, "static")
	sv.public.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(files)))
	sv.public.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, files, "index.html")
	})
}
