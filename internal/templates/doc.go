// Package templates reads rboinc application queues: pairs of BOINC
// templates (rboinc_NAME_wu, rboinc_NAME_result) carrying <rboinc .../>
// annotations that name the scientist's parameters, output aliases and
// chaining. It validates them strictly, because a template mistake otherwise
// surfaces days later inside BOINC, and it produces the cleaned copies that
// BOINC's create_work and transitioner get, unchanged byte for byte apart
// from the documented edits.
package templates
