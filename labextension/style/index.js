import './base.css';
import './notebook-ui.css';
import './variables.css';
import './model-settings.css';
import './mentions.css';
import './agent-edits.css';
