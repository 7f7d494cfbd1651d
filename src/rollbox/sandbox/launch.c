/* rollbox launcher: puts itself into a sandbox's cgroups, makes the sandbox's workspace mounts in
 * a mount namespace of its own, drops to the sandbox's user, execs bwrap.
 *
 *   rollbox-launch [--wait-fd FD] [--cgroup FILE]... [--private-mounts]
 *                  [--mount FSTYPE TARGET OPTIONS | --mkdir PATH MODE UID]...
 *                  [--user UID:GID] -- COMMAND ARG...
 *
 * In this order, whatever the order of the options: with --wait-fd it first waits for one byte
 * on FD (the host makes the cgroups meanwhile; EOF instead of the byte means the host gave up:
 * exit 125 without a word). Each FILE is a cgroup's `tasks` (v1) or `cgroup.procs` (v2) file;
 * the launcher writes "0" to it, which moves the writer itself. A process that moves itself
 * (rather than being moved by pid, as the host did before) skips the kernel's global threadgroup
 * lock, whose first writer after an idle moment waits for an RCU grace period (up to ~13 ms on a
 * cgroup v1 host). Everything the command starts is then born in the cgroups: bubblewrap, and
 * the sandbox's agent. --user switches to UID:GID with GID as the only group (as
 * `chroot --userspec=UID:GID --groups=GID /` did).
 * --private-mounts unshares a mount namespace (its mounts propagate nowhere) in which the --mount
 * and --mkdir operations then run, in their order: the sandbox's writable tmpfs and overlay live
 * there, outside the host's mount table (which bubblewrap copies at every start, so a table that
 * grew with every live sandbox made each start slower), and go when the sandbox's last process
 * does. MODE is octal; UID -1 keeps the owner.
 * Any failure exits 125 with a message on stderr, before the command runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static void fail(const char *what, const char *arg) {
    fprintf(stderr, "rollbox-launch: %s %s: %s\n", what, arg, strerror(errno));
    exit(125);
}

static void enter(const char *file) {
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot open", file);
    if (write(fd, "0", 1) != 1) fail("cannot enter the cgroup of", file);
    close(fd);
}

static void become(const char *spec) {
    char *end;
    errno = 0;
    unsigned long uid = strtoul(spec, &end, 10);
    if (errno || *end != ':') {
        errno = EINVAL;
        fail("bad --user", spec);
    }
    unsigned long gid = strtoul(end + 1, &end, 10);
    if (errno || *end != '\0') {
        errno = EINVAL;
        fail("bad --user", spec);
    }
    gid_t groups[1] = {(gid_t)gid};
    if (setgroups(1, groups) != 0) fail("cannot set the groups of", spec);
    if (setgid((gid_t)gid) != 0) fail("cannot set the group of", spec);
    if (setuid((uid_t)uid) != 0) fail("cannot become", spec);
}

static void private_mounts(void) {
    if (unshare(CLONE_NEWNS) != 0) fail("cannot unshare", "a mount namespace");
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) fail("cannot make / a", "slave");
}

static void do_mount(const char *fstype, const char *target, const char *options) {
    if (mount(fstype, target, fstype, 0, options) != 0) fail("cannot mount", target);
}

static void do_mkdir(const char *path, const char *mode_s, const char *uid_s) {
    char *end;
    long mode = strtol(mode_s, &end, 8), uid;
    if (*end != '\0' || mode < 0 || mode > 07777) {
        errno = EINVAL;
        fail("bad mode for", path);
    }
    uid = strtol(uid_s, &end, 10);
    if (*end != '\0' || uid < -1) {
        errno = EINVAL;
        fail("bad uid for", path);
    }
    if (mkdir(path, (mode_t)mode) != 0) fail("cannot make", path);
    if (chmod(path, (mode_t)mode) != 0) fail("cannot chmod", path); /* whatever the umask took */
    if (uid >= 0 && chown(path, (uid_t)uid, (gid_t)uid) != 0) fail("cannot chown", path);
}

static void wait_for(const char *fd_s) {
    char *end, b;
    long fd = strtol(fd_s, &end, 10);
    if (*end != '\0' || fd < 0) {
        errno = EINVAL;
        fail("bad --wait-fd", fd_s);
    }
    ssize_t n;
    do {
        n = read((int)fd, &b, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) exit(125);
    close((int)fd);
}

int main(int argc, char **argv) {
    const char *user = NULL, *wait_fd = NULL;
    const char **cgroups = calloc((size_t)argc, sizeof *cgroups);
    int *ops = calloc((size_t)argc, sizeof *ops); /* where each --mount/--mkdir is in argv */
    int i = 1, n_cgroups = 0, n_ops = 0, private = 0;
    if (cgroups == NULL || ops == NULL) fail("out of memory", "");
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "--wait-fd") == 0 && i + 1 < argc) {
            wait_fd = argv[++i];
        } else if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc) {
            cgroups[n_cgroups++] = argv[++i];
        } else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) {
            user = argv[++i];
        } else if (strcmp(argv[i], "--private-mounts") == 0) {
            private = 1;
        } else if ((strcmp(argv[i], "--mount") == 0 || strcmp(argv[i], "--mkdir") == 0) &&
                   i + 3 < argc) {
            ops[n_ops++] = i;
            i += 3;
        } else {
            errno = EINVAL;
            fail("unknown argument", argv[i]);
        }
    }
    if (i >= argc) {
        errno = EINVAL;
        fail("no command after", "--");
    }
    /* in this order, whatever the order of the options: the gate, the cgroups, the mounts, the
     * user */
    if (wait_fd != NULL) wait_for(wait_fd);
    for (int k = 0; k < n_cgroups; k++) enter(cgroups[k]);
    if (n_ops > 0 && !private) {
        errno = EINVAL;
        fail("--mount and --mkdir need", "--private-mounts");
    }
    if (private) private_mounts();
    for (int k = 0; k < n_ops; k++) {
        char **op = argv + ops[k];
        if (strcmp(op[0], "--mount") == 0)
            do_mount(op[1], op[2], op[3]);
        else
            do_mkdir(op[1], op[2], op[3]);
    }
    if (user != NULL) become(user);
    execvp(argv[i], argv + i);
    fail("cannot run", argv[i]);
}
