package wucreate

// The RBoinc-annotated input template of boinc-real-observations.md 3a
// (the stand-in's tests use the same one).
const tmplIn3a = `<rboinc application="rbtest" description="x"/>
<file_info><number>0</number></file_info>
<file_info><number>1</number></file_info>
<workunit>
  <file_ref><file_number>0</file_number><open_name>in.coor</open_name><copy_file/>
     <rboinc parameter_name="coor_file" parameter_description="Coordinates" optional="true"/></file_ref>
  <file_ref><file_number>1</file_number><open_name>in.psf</open_name>
     <rboinc parameter_name="psf_file" parameter_description="Topology"/></file_ref>
  <command_line>--steps 10</command_line>
  <rsc_fpops_est>1e9</rsc_fpops_est>
  <rsc_fpops_bound>1e12</rsc_fpops_bound>
</workunit>
`
