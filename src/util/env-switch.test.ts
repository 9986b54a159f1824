import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { envSwitch, envSwitchError } from './env-switch.js';

void describe('envSwitch', () => {
  void it('reads on and off in their usual spellings, any case; unset and empty are off', () => {
    for (const v of ['on', 'TRUE', 'yes', '1', ' On ']) assert.equal(envSwitch({ X: v }, 'X'), true, v);
    for (const v of ['off', 'False', 'no', '0', '']) assert.equal(envSwitch({ X: v }, 'X'), false, v);
    assert.equal(envSwitch({}, 'X'), false);
  });

  void it('refuses anything else, naming the variable and the valid values', () => {
    assert.equal(envSwitch({ X: 'maybe' }, 'X'), undefined);
    assert.equal(envSwitchError({ X: 'maybe' }, 'X'), 'invalid value "maybe" for X; valid values: on, off');
    assert.equal(envSwitchError({ X: 'on' }, 'X'), undefined);
  });
});
