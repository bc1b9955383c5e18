import { describe, expect, it } from 'vitest';
import {
  parseChildCpuTimes,
  parseCpuSeconds,
  parseCpuTimes,
  parseStatus,
  residentByMapping,
  sampleProcess,
} from '../src/proc-stats.ts';

describe('parseStatus', () => {
  it('reads VmRSS, VmHWM, RssFile and RssAnon in MiB', () => {
    const text =
      'Name:\tnode\nVmPeak:\t 999999 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n' +
      'RssAnon:\t   40960 kB\nRssFile:\t   61440 kB\nRssShmem:\t       0 kB\nThreads:\t11\n';
    expect(parseStatus(text)).toEqual({ rssMb: 100, peakRssMb: 200, rssFileMb: 60, rssAnonMb: 40 });
  });

  it('says which line is missing', () => {
    expect(() => parseStatus('VmRSS:\t 1 kB\n')).toThrow(/VmHWM/);
    expect(() => parseStatus('VmRSS:\t 1 kB\nVmHWM:\t 1 kB\n')).toThrow(/RssFile/);
    expect(() => parseStatus('VmRSS:\t 1 kB\nVmHWM:\t 1 kB\nRssFile:\t 1 kB\n')).toThrow(/RssAnon/);
  });
});

describe('parseChildCpuTimes', () => {
  it('reads the cutime and cstime of waited-for children, apart from the process own times', () => {
    const line = '1234 (node) S 1 1234 1234 0 -1 4194560 5000 0 0 0 250 75 120 30 20 0 11 0';
    expect(parseChildCpuTimes(line)).toEqual({ userS: 1.2, systemS: 0.3 });
    expect(parseCpuTimes(line)).toEqual({ userS: 2.5, systemS: 0.75 });
  });

  it('refuses a line without them', () => {
    expect(() => parseChildCpuTimes('42 (node) S 1 42 42 0 -1 0 0 0 0 0 100 100')).toThrow(/malformed/);
  });
});

describe('parseCpuSeconds', () => {
  it('adds utime and stime in clock ticks of 1/100 s', () => {
    const line = '1234 (node) S 1 1234 1234 0 -1 4194560 5000 0 0 0 250 75 0 0 20 0 11 0';
    expect(parseCpuSeconds(line)).toBe(3.25);
  });

  it('counts fields after the last parenthesis, whatever the command name holds', () => {
    const line = '42 (a) b (c d) R 1 42 42 0 -1 0 0 0 0 0 100 100 0 0 20 0 1 0';
    expect(parseCpuSeconds(line)).toBe(2);
  });

  it('refuses a truncated line', () => {
    expect(() => parseCpuSeconds('42 (node) S 1 2')).toThrow(/malformed/);
  });

  it('keeps the system part apart in parseCpuTimes', () => {
    const line = '1234 (node) S 1 1234 1234 0 -1 4194560 5000 0 0 0 250 75 0 0 20 0 11 0';
    expect(parseCpuTimes(line)).toEqual({ userS: 2.5, systemS: 0.75 });
  });
});

describe('residentByMapping', () => {
  it('sums Rss per mapping name across its segments, unnamed mappings as [anon]', () => {
    const smaps = [
      '00400000-00600000 r-xp 00000000 fd:00 123   /usr/bin/node',
      'Size:               2048 kB',
      'Rss:                1024 kB',
      '00600000-00700000 r--p 00200000 fd:00 123   /usr/bin/node',
      'Rss:                 512 kB',
      '7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ',
      'Rss:                 256 kB',
      '7f0000100000-7f0000200000 rw-p 00000000 00:00 0   [heap]',
      'Rss:                  64 kB',
    ].join('\n');
    expect(Object.fromEntries(residentByMapping(smaps))).toEqual({
      '/usr/bin/node': 1536,
      '[anon]': 256,
      '[heap]': 64,
    });
  });
});

describe('sampleProcess', () => {
  it('reads this process: RSS within its peak, CPU time used so far', async () => {
    const sample = await sampleProcess(process.pid);
    expect(sample.rssMb).toBeGreaterThan(1);
    expect(sample.peakRssMb).toBeGreaterThanOrEqual(sample.rssMb);
    expect(sample.cpuS).toBeGreaterThan(0);
    expect(sample.cpuSystemS).toBeGreaterThanOrEqual(0);
    expect(sample.cpuSystemS).toBeLessThanOrEqual(sample.cpuS);
  });
});
