package io.gospan.receiver.event;

/** Which end of the RPC the traced process is. */
public enum Side {
  CLIENT,
  SERVER
}
