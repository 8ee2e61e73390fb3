package legacy

// The original clients read the WU template's inputs as a Perl array,
// @{$t->{WuTemplate}->{workunit}->{file_ref}}, from an XMLin that does not
// force file_ref to be one. XML::Simple makes an array only of an element
// that repeats: with one <file_ref> the clients found a hash, with none
// nothing, and boinc_submit died ("Not an ARRAY reference") before it
// uploaded anything, also for -help_parameters. The original server had
// the same fault; a queue with a single input is ordinary, so the answer
// carries empty <file_ref> elements up to two: the clients read them as
// empty hashes, which name no parameter and are skipped.
const clientFileRefs = 2

// padFileRefs pads the workunit's file_ref list of a template read by
// readTemplate to clientFileRefs entries.
func padFileRefs(wu any) {
	t, ok := wu.(hash)
	if !ok {
		return
	}
	w, ok := t["workunit"].(hash)
	if !ok {
		return
	}
	refs, _ := w["file_ref"].(list)
	for len(refs) < clientFileRefs {
		refs = append(refs, hash{})
	}
	w["file_ref"] = refs
}
