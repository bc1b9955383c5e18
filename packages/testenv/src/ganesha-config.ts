/** What {@link ganeshaConfig} needs. */
export interface GaneshaConfigOptions {
  /** TCP port on 127.0.0.1. */
  readonly port: number;
  /** Absolute directory on disk to export. */
  readonly exportDir: string;
  /** NFSv4 pseudo path clients see it under; `/` puts it at the server root. */
  readonly pseudoPath: string;
  /** Where ganesha keeps NFSv4 client recovery records (default `/var/lib/nfs/ganesha`). */
  readonly recoveryDir: string;
  /** Whose requests become the anonymous user's; default `none` (root stays root). */
  readonly squash?: 'none' | 'root' | undefined;
  /** Export read-only (`Access_Type = RO`); default false. */
  readonly readOnly?: boolean | undefined;
}

function quoted(value: string): string {
  if (/["\\\n]/u.test(value)) throw new Error(`unsupported character in ganesha config value ${value}`);
  return `"${value}"`;
}

/**
 * A ganesha.conf for one VFS export on loopback. NFSv4 over TCP only, so nothing registers with
 * rpcbind and no UDP, NLM or RQUOTA ports are opened; graceless, so clients need not wait out the
 * 90 s grace period after start; no root squash unless `squash` says so, so tests read and write as
 * root like a provisioner pod on a `no_root_squash` export.
 */
export function ganeshaConfig(options: GaneshaConfigOptions): string {
  if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65_535) {
    throw new Error(`invalid port ${options.port}`);
  }
  if (!options.pseudoPath.startsWith('/'))
    throw new Error(`pseudo path must be absolute: ${options.pseudoPath}`);
  return `NFS_CORE_PARAM {
  Bind_addr = 127.0.0.1;
  NFS_Port = ${options.port};
  Protocols = 4;
  Enable_UDP = false;
  Enable_NLM = false;
  Enable_RQUOTA = false;
}
NFSv4 {
  Graceless = true;
  RecoveryBackend = fs;
  RecoveryRoot = ${quoted(options.recoveryDir)};
}
NFS_KRB5 {
  Active_krb5 = false;
}
EXPORT {
  Export_Id = 1;
  Path = ${quoted(options.exportDir)};
  Pseudo = ${quoted(options.pseudoPath)};
  Access_Type = ${options.readOnly === true ? 'RO' : 'RW'};
  Squash = ${options.squash === 'root' ? 'Root_Squash' : 'No_Root_Squash'};
  SecType = sys;
  Protocols = 4;
  Transports = TCP;
  FSAL {
    Name = VFS;
  }
}
LOG {
  Default_Log_Level = EVENT;
}
`;
}
