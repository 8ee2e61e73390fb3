#!/usr/bin/perl
# A stand-in for the original Perl clients, written for rboinc's tests from
# the protocol description (it is not the original code): it talks to the
# server with the same libraries the originals used (LWP, HTTP::DAV,
# XML::Simple) and in the same way, credentials coming only from the URL.
#
#   perlclient.pl submit URL QUEUE GROUP NAME NUMSTEPS PARAM=FILE...
#   perlclient.pl retrieve URL GROUP NAME INTO
use strict;
use warnings;
use LWP::UserAgent;
use HTTP::DAV;
use XML::Simple;

my ($cmd, $url, @args) = @ARGV;
my $ua = LWP::UserAgent->new;

sub cgi {
    my ($script, %form) = @_;
    my $r = $ua->post("$url/$script", \%form);
    die "Error in POST from remote: " . $r->status_line . "\n" unless $r->is_success;
    die "Content-type is not text/plain\n" unless $r->header('Content-Type') eq 'text/plain';
    return $r->content;
}

sub dav_open {
    my $x = XMLin(cgi('boinc_retrieve_server.pl', action => 'get_dav_url'));
    die "no DavUrl\n" unless $x->{DavUrl};
    my $dav = HTTP::DAV->new;
    $dav->open(-url => $x->{DavUrl}) or die "DAV open: " . $dav->message . "\n";
    return $dav;
}

if ($cmd eq 'submit') {
    my ($queue, $group, $name, $steps, @files) = @args;
    my $t = XMLin(cgi('boinc_retrieve_server.pl', action => 'get_wu_template', application => $queue),
        ForceArray => ['file_info']);
    die "Server error message: $t->{Failure}{Reason}\n" if $t->{Failure};
    die "Not a remote-enabled application.\n" unless $t->{WuTemplate}{rboinc}{application};
    my %params = map { $_->{rboinc}{parameter_name} ? ($_->{rboinc}{parameter_name} => 1) : () }
        @{ $t->{WuTemplate}{workunit}{file_ref} };
    my $id = sprintf('up%06d', int(rand(999999)));
    my $desc = XMLout({ RandomId => $id, LoginName => 'someone-else', Group => $group, Name => $name,
        Template => $queue, NumSteps => $steps, Priority => 1, TargetNResults => 1, MinQuorum => 1,
        DryRun => '', Email => '', UnparsedCommandLine => ["@ARGV"] }, RootName => 'BoincRemote', AttrIndent => 1);
    my $dav = dav_open();
    $dav->mkcol(-url => $id) or die "MKCOL: " . $dav->message . "\n";
    $dav->cwd($id) or die "cwd: " . $dav->message . "\n";
    for (@files) {
        my ($p, $f) = split /=/, $_, 2;
        die "queue $queue has no parameter $p\n" unless $params{$p};
        $dav->put(-local => $f, -url => $p) or die "PUT $p: " . $dav->message . "\n";
    }
    $dav->put(-local => \$desc, -url => 'description_file.xml') or die "PUT description: " . $dav->message . "\n";
    my $s = XMLin(cgi('boinc_submit_server.pl', random_id => $id));
    $dav->cwd('..');
    $dav->delete($id);
    die "The server CGI returned an error. Reason: $s->{Failure}{Reason}\n" if $s->{Failure};
    print "Submission complete.\n$s->{Return}{StdOut}";
    exit $s->{Return}{ExitCode};
}

if ($cmd eq 'retrieve') {
    my ($group, $name, $into) = @args;
    my $x = XMLin(cgi('boinc_retrieve_server.pl', action => 'retrieve', group => $group, name => $name, loginname => 'someone-else'),
        ForceArray => ['File', 'Alias'], KeyAttr => []);
    die "Server error message: $x->{Failure}{Reason}\n" if $x->{Failure};
    my %alias = map { $_->{Extension} => $_->{Alias} } @{ $x->{AliasTable}{File} };
    my $dir = $x->{Success}{Directory};
    my $dav = dav_open();
    $dav->cwd($dir) or die "cwd $dir: " . $dav->message . "\n";
    my $n = 0;
    for my $f (@{ $x->{FileList}{File} }) {
        my ($ext) = $f =~ /(_\d+)$/;
        my $suffix = $ext && $alias{$ext} ? $alias{$ext}[0] : '';
        $dav->get(-url => $f, -to => "$into/$f$suffix") or die "GET $f: " . $dav->message . "\n";
        $n++;
    }
    my $rm = cgi('boinc_retrieve_server.pl', action => 'remove', dir => $dir, loginname => 'someone-else');
    my $r = XMLin($rm);
    die "Server error message: $r->{Failure}{Reason}\n" if $r->{Failure};
    $dav->delete($_) for @{ $x->{FileList}{File} };
    $dav->cwd('..');
    $dav->delete($dir);
    print "Successfully retrieved $n.\nRemoved $r->{Success}{NumberRemoved} server files, $r->{Success}{NumberKept} were too recent to remove.\n";
    exit 0;
}
die "usage: perlclient.pl submit|retrieve ...\n";
