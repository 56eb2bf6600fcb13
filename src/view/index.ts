export * from './viewTypes.js';
export * from './sessionState.js';
export * from './approvalInbox.js';
export * from './sessionView.js';
