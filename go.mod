module github.com/sase-cep/sase

go 1.26

require (
	github.com/antlr4-go/antlr/v4 v4.13.1
	github.com/chzyer/readline v1.5.1
	github.com/fatih/color v1.19.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	golang.org/x/exp v0.0.0-20240506185415-9bf2ced13842 // indirect
	golang.org/x/sys v0.42.0 // indirect
)
