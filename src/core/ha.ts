/**
 * The HA hook: decides whether this agent is the active one of a group of agents watching
 * the same servers (leader election, e.g. a Kubernetes Lease). The default is always active.
 *
 * A standby agent keeps its monitors loaded (status, API) but does not collect: the level
 * collector runs the monitor's `plans.change.standby.plan` when plan changing is on and that
 * plan is set, else it pauses; the heartbeat writer does not write. Scrapes and probes are
 * answered as usual (the scraper chooses whom it asks). docs/ha.md tells the whole contract.
 */

export interface HighAvailability {
  /**
   * True when this agent is the active one; false puts it on standby. Each monitor asks once
   * a second, so keep it cheap: answer from state your election loop keeps, synchronously
   * when you can (a promise per monitor per second adds up with many monitors).
   *
   * A throw or a rejection keeps the previous answer (standby before the first answer) and
   * is reported once as the error event `ha-error` until an answer comes again. Any answer
   * other than `true` or `false` counts as such a failure.
   */
  isActive(): boolean | Promise<boolean>;
}

/** The default hook: this agent is always the active one (no election). */
export const ALWAYS_ACTIVE: HighAvailability = Object.freeze({ isActive: (): boolean => true });
