/**
 * Implementation details shared by the inbox modules. No compatibility promise: anything here may
 * change or vanish in any release.
 */
package dev.idempotent.inbox.internal;
