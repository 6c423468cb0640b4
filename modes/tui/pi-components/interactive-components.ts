/**
 * The interactive mode's components pi 1.6 exports for extensions: message
 * components, tool/bash/footer components and dialogs, each a pi-tui component loaded on first use.
 */
export { AssistantMessageComponent, UserMessageComponent, CustomMessageComponent, BranchSummaryMessageComponent, CompactionSummaryMessageComponent, SkillInvocationMessageComponent } from "./components-messages.js";
export { ToolExecutionComponent, BashExecutionComponent, FooterComponent, type ToolExecutionOptions } from "./components-tools.js";
export { ExtensionEditorComponent, ExtensionInputComponent, ExtensionSelectorComponent, LoginDialogComponent, ArminComponent } from "./components-dialogs.js";
