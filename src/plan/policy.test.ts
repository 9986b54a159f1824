import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, parsePolicy } from './policy.js';

void describe('parsePolicy', () => {
  void it('defaults to report,drop,retry', () => {
    assert.deepEqual(parsePolicy(''), { report: 'report', metric: 'drop', retry: 'retry' });
    assert.deepEqual(DEFAULT_POLICY, { report: 'report', metric: 'drop', retry: 'retry' });
  });

  void it('classifies each word by value, in any order', () => {
    assert.deepEqual(parsePolicy('ignore,drop,retry'), { report: 'ignore', metric: 'drop', retry: 'retry' });
    assert.deepEqual(parsePolicy('stop,zero,report-once'), {
      report: 'report-once',
      metric: 'zero',
      retry: 'stop',
    });
  });

  void it('keeps defaults for missing parts and ignores unknown words', () => {
    assert.deepEqual(parsePolicy('zero'), { report: 'report', metric: 'zero', retry: 'retry' });
    assert.deepEqual(parsePolicy('loud,stop,whatever'), { report: 'report', metric: 'drop', retry: 'stop' });
  });

  void it('trims blanks and lets the last word of a part win', () => {
    assert.deepEqual(parsePolicy(' ignore , zero '), { report: 'ignore', metric: 'zero', retry: 'retry' });
    assert.deepEqual(parsePolicy('ignore,report'), { report: 'report', metric: 'drop', retry: 'retry' });
  });

  void it('returns a new object each time', () => {
    const p = parsePolicy('');
    p.report = 'ignore';
    assert.equal(parsePolicy('').report, 'report');
    assert.equal(DEFAULT_POLICY.report, 'report');
  });
});
