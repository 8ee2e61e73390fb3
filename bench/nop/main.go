// Command nop does nothing: the benchmarks time its start as the floor of
// any hook written in Go that BOINC starts once per work unit.
package main

func main() {}
