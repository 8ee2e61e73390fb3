// Package audit holds no code: its tests check properties of the module's
// own source that no single package can check about itself, such as that
// no program is ever run through a shell.
package audit
