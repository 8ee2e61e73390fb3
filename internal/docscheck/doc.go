// Package docscheck holds no code: its tests hold the README and the pages
// of docs/ to the source they describe, so that the docs cannot drift from
// it: every package.Func that docs/architecture.md names exists, every
// relative link and anchor leads somewhere, and the README stays short.
// (The example command lines are checked by each command's TestDocsPages,
// the master program by TestReadmeMaster in workflow/master.)
package docscheck
