package grammar

//go:generate bash generate.sh
