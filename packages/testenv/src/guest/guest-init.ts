/**
 * PID 1 of the guest and the addresses of its private network. The script is part of the root image
 * (and of its cache key): it mounts the pseudo file systems, configures the guest's side of the tap
 * link, mounts the host's share directory with hostfs, loads the modules tests need and runs the
 * agent through which the host runs commands. Everything that changes per boot (share directory,
 * agent port) comes from the kernel command line, so one cached image serves every run.
 */

/** The host's end of the tap link inside the guest's network namespace. */
export const gatewayAddress = '10.0.3.1';
/** The guest's address. */
export const guestAddress = '10.0.3.2';
/** Prefix length of the link. */
export const linkPrefix = 24;
/** TCP port of the agent inside the guest. */
export const agentPort = 7070;
/** Where the share directory is mounted inside the guest. */
export const guestShareMount = '/share';
/** Where the scratch disk (ubdb) is mounted inside the guest; file systems for tests live on it. */
export const guestScratchMount = '/scratch';
/** A non-root user of the image, for writers that must not bypass quotas or permissions. */
export const guestUser: { readonly name: string; readonly uid: number; readonly gid: number } = {
  name: 'guest',
  uid: 1000,
  gid: 1000,
};
/** Modules loaded at boot: the NFSv4 client, quota formats and loop devices. */
export const bootModules: readonly string[] = ['nfsv4', 'quota_v2', 'loop'];

/**
 * Files written into the root image. The guest has no name service: host names resolve from
 * `/etc/hosts` alone, and a resolver without name servers fails at once instead of timing out
 * (the NFS client's id mapper looks up the host's domain on the first mount, 5 s per timeout).
 */
export const imageFiles: Readonly<Record<string, string>> = {
  '/etc/hostname': 'guest\n',
  '/etc/hosts': `127.0.0.1 localhost\n${guestAddress} guest\n${gatewayAddress} host\n`,
  '/etc/resolv.conf': '# no name service inside the test guest\n',
  '/etc/idmapd.conf': '[General]\nDomain = localdomain\n',
};

/** Kernel command-line keys the init script reads (dotted, so the kernel hands none to init itself). */
export const bootParameter = {
  share: 'testenv.share',
  agent: 'testenv.agent',
} as const;

/**
 * The init script. Its output goes to the console (the UML process's standard output, which the
 * host keeps as `console.log`). When the agent exits the guest powers off, so a crashed agent never
 * leaves a guest that nothing can reach.
 */
export const initScript: string = `#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
exec >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
share=
agent=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    ${bootParameter.share}=*) share="\${arg#*=}" ;;
    ${bootParameter.agent}=*) agent="\${arg#*=}" ;;
  esac
done
hostname guest
ip link set lo up
ip addr add ${guestAddress}/${linkPrefix} dev vec0
ip link set vec0 up
ip route add default via ${gatewayAddress}
mount -t hostfs -o "$share" none ${guestShareMount}
if [ -b /dev/ubdb ]; then mount /dev/ubdb ${guestScratchMount}; fi
modprobe -a ${bootModules.join(' ')}
echo "testenv-guest: starting the agent"
node "$agent" ${agentPort} &
wait $!
echo "testenv-guest: the agent exited with $?; powering off"
echo o > /proc/sysrq-trigger
# PID 1 must outlive the power-off request, or the kernel panics.
while :; do sleep 60; done
`;
