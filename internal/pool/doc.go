// Package pool is the content store: every distinct input content is kept
// once, named by its MD5, whoever submitted it and however often. Contents
// reach BOINC as hard links in the download hierarchy under the immutable,
// content-derived physical name rboinc_<md5> (jf_<md5> in work units made
// before: see names.go), with a .md5 sidecar.
package pool
